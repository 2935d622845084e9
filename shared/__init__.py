"""What every Benchwarmers service shares: bus schemas, subjects, settings, ids, logging, NATS helpers.

No business rule of a single service lives here; the config fold does, because every service reads
the same configuration and must read it the same way.
"""
