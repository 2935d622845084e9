"""The gateway's HTTP routes: thin handlers over the domain modules."""
