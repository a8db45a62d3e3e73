"""Which offers, in what order: one package from the question (a query or a job spec) to the ranked list.

Modules, each using only those before it: ``query`` (what is asked, what matches), ``order`` (cheapest
first at the user's exchange rate, a spec's ``choose``), ``choice`` (what a chosen offer means for a spec
with alternatives), ``catalog`` (price-catalog offers for clouds without an account), ``collect`` (the
profiles asked side by side), ``find`` (:func:`~workbench.core.offers.find.find_offers`, the one entry
point, and why nothing matched).
"""
