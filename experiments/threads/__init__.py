"""The thread study job: a ``schedule: threads`` spec run through the run kernel, one unit per thread."""
