"""Belief-behaviour consistency: stance-judge agreement, posts and votes against reported stances in
trials, stated against enacted answer distributions in surveys."""
