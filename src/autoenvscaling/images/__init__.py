"""Base-image catalog and offline bootstrap; image aliases for tasks whose base image cannot be pulled."""
