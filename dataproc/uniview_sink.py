"""Dataproc PySpark entry point: `gcloud dataproc jobs submit pyspark dataproc/uniview_sink.py
--py-files uniview-<version>-py3-none-any.whl -- --input gs://... --warehouse bigquery://PROJECT ...`.
The arguments are those of `uniview sink`; see docs/sink.md."""

from uniview.cli.sink import main

if __name__ == "__main__":
    main()
