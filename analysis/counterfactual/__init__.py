"""Counterfactual persona audits: does a persona attribute, and only it, change the answers?"""
