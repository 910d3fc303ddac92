"""The data iobound ships with its loaders: parts and prices for sizing (``catalogue.toml``), what a description's
words for hardware imply (``hardware.toml``), what bounds a metadata server nobody states a rate for
(``metadata_bounds.toml``), the published metadata rates per server, shown as information (``metadata_rates.toml``),
and the dated catalogue of what shipped parts achieve (``achievable.toml``)."""
