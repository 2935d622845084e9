"""The prober: the scheduler (off by default); later health and perf probes, auto-retire, onboarding."""
