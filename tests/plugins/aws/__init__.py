"""Tests of the AWS provider against moto in server mode (real boto3 over HTTP)."""
