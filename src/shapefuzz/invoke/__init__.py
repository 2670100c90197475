"""The IREE calls on one module: verify, compile for a lane, run on a device (execute), and reprint a reproducer for an older release."""
