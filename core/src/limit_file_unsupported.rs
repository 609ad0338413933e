//! Where the system is not Unix (WebAssembly): a concurrency limit cannot be shared through a
//! file, so no file's places are ever opened and asking for them is a clear error
//! (`Unsupported`). The names are those of the Unix module, so the limit reads the same.

use std::convert::Infallible;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::clock::CancelToken;
use crate::limit::{RemoteLimit, RemotePlace};
use crate::shm::{unsupported, SharedError};

/// The places of a limit in a file: never made here.
#[derive(Debug)]
pub(crate) struct FilePlaces(Infallible);

impl FilePlaces {
    /// Refuses: no file can hold places here.
    pub(crate) fn open(path: &Path, _limit: u32) -> Result<Self, SharedError> {
        Err(unsupported(path))
    }

    pub(crate) fn path(&self) -> &Path {
        match self.0 {}
    }

    pub(crate) fn count_held(&self) -> Result<u32, SharedError> {
        match self.0 {}
    }
}

/// A handle on the places of a file: never made here.
#[derive(Debug)]
pub(crate) struct FileLimit(pub(crate) std::sync::Arc<FilePlaces>);

impl RemoteLimit for FileLimit {
    fn limit(&self) -> u32 {
        match self.0 .0 {}
    }

    fn acquire(
        &self,
        _timeout: Option<Duration>,
        _calls_until: Option<Instant>,
        _cancel: &CancelToken,
    ) -> Result<Option<RemotePlace>, SharedError> {
        match self.0 .0 {}
    }
}
