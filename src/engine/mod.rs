//! The lab engine: start, check, reset, status and selftest against any cluster through `kube`.
