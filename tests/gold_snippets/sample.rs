use std::fmt;

/// A worker.
#[derive(Debug, Clone)]
pub struct SearchWorker {
    id: u32,
}

impl SearchWorker {
    /// Runs a search.
    #[inline]
    pub fn search(&self, q: &str) -> usize {
        q.len()
    }
}

impl fmt::Display for SearchWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "worker {}", self.id)
    }
}

pub trait Searcher {
    fn search(&self, q: &str) -> usize;
}

mod util {
    pub fn helper() {}
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}
