"""Network measures: homophily of follow and like graphs, selection and influence on a dynamic follow network."""
