"""Task callbacks: a durable queue of signed POSTs of the record on each status change."""
