"""The epidemic job: a ``schedule: epidemic`` spec run through the run kernel, one unit per replicate."""
