"""The study spec: schema (study, trial, analysis), YAML reading, preregistration lock and design expansion."""
