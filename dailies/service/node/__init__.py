"""One process put together and run: Services, render slots, housekeeping, the worker process, start-up."""
