"""The Django application of the Django program: its models."""
