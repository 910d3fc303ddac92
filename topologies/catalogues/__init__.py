"""The data iobound ships with its loaders: parts and prices for sizing (``catalogue.toml``), what a description's
words for hardware imply (``hardware.toml``) and the published metadata rates per server (``metadata_rates.toml``)."""
