"""Test-only domains: built with the kit as a plug-in would be, to hold the core to its declarations."""
