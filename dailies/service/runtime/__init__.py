"""What every long-running part runs on: faults, circuit breakers, loops, metrics, wake-ups."""
