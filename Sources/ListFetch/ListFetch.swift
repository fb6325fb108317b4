// ListFetch: see README.md and ../shared/ARCHITECTURE.md.
