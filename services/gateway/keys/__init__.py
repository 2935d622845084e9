"""Gateway keys (SEC-4): their per-minute caps across every replica, their scope, their last use."""
