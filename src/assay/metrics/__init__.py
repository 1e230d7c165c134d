"""Series, merged histograms, percentiles, windows: statistics done right."""
