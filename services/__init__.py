"""The five Benchwarmers services."""
