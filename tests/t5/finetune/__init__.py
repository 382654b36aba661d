"""Fine-tuning tests (issue 35): loaders, metrics, the run, the CLI."""
