"""What every pvsst package may import: the one input error, the shared validators and the atomic
writer. It imports none of the packages.
"""
