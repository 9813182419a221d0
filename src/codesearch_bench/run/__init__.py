"""The run stage: plan, one cell, the comparison, jobs and workers, resume, shards, probe."""
