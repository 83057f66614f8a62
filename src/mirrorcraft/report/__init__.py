"""Human-readable output of the analysis: text/Markdown/CSV tables, plots, HTML report, viewer."""
