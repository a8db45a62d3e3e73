"""Amazon EC2 provider for the workbench (boto3, imported lazily).

Modules: ``settings`` (profile settings), ``clients`` (one boto3 Session per
thread, clients with retries and timeouts, MFA), ``codes`` (reading a botocore
error's code and status), ``errors`` (the AWS error table → workbench errors),
``pricing`` (Price List API + spot history parsers), ``quotas`` (Service
Quotas), ``offers``, ``userdata``, ``launch``, ``inventory`` (listing by
tag), ``teardown``, ``billing`` (CloudWatch, Cost Explorer) and ``provider``
(the :class:`~workbench.core.providers.contract.Provider` the app sees).
"""
