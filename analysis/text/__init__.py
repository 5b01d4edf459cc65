"""Text measures: lexical convergence, text diversity, template echo and feed-like markup in posts."""
