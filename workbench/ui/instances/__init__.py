"""The Instances view: table, logs, remote access, Stop all billing."""
