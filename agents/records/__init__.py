"""Records: frozen values and their JSON codec (the lowest layer above the errors)."""
