"""mantra-gen: the manifest model, loaders, validator and C renderer."""
__version__ = "0.1.0"
