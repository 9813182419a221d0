package sample

// Server serves.
type Server struct {
	addr string
}

// List is generic.
type List[T any] struct {
	items []T
}

// Serve runs.
func (s *Server) Serve() error {
	return nil
}

func (l *List[T]) Push(v T) {
	l.items = append(l.items, v)
}

func (l List[T]) Len() int { return len(l.items) }

func New(addr string) *Server {
	return &Server{addr: addr}
	// trailing
}
