"""The ground floor: spawning, the guardian, reaping, signals and /proc sampling.

The one home of process-wide state (the guardian, the processes bench owns, the
signal handlers). It may import only `errors`.
"""
