"""The shard store on S3: a real S3-compatible server (moto's server mode) on 127.0.0.1, no mocks.

The same cycle as on the local filesystem — write, list, read, replay, quarantine a damaged shard,
find an orphan — through ``pyarrow.fs.S3FileSystem``, where a rename is a server-side copy.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import boto3
import numpy as np
import pyarrow.fs as pafs
import pytest
from moto.server import ThreadedMotoServer

from omega_cluster.data import (
    CorruptShardError,
    ReplayWindow,
    ShardStore,
    ShardWriter,
    audit_store,
)
from omega_cluster.data.synthetic import synthetic_records

KEY, SECRET, REGION, BUCKET = "testing", "moto-secret", "us-east-1", "omega-shards"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=f"http://{endpoint}",
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        region_name=REGION,
    )
    client.create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


def _client(endpoint: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=f"http://{endpoint}",
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        region_name=REGION,
    )


def _objects(endpoint: str, prefix: str) -> list[str]:
    listing = _client(endpoint).list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in listing.get("Contents", []) if not o["Key"].endswith("/"))


def test_write_list_read_quarantine_cycle_on_s3(s3_endpoint: str) -> None:
    fs = pafs.S3FileSystem(
        endpoint_override=s3_endpoint,
        scheme="http",
        access_key=KEY,
        secret_key=SECRET,
        region=REGION,
    )
    store = ShardStore(f"s3://{BUCKET}/run1", filesystem=fs)
    assert store.uri == f"s3://{BUCKET}/run1"
    writer = ShardWriter(store, writer_id="actor_0")
    records = [
        synthetic_records(20, np.random.default_rng(s), observation_size=8) for s in range(3)
    ]
    infos = [writer.write(chunk) for chunk in records]
    entries = store.entries()
    assert entries == [info.entry for info in infos]
    shard_objects = _objects(s3_endpoint, "run1/shards/")
    assert shard_objects == sorted(f"run1/{e.shard_path}" for e in entries)  # no temp objects

    window = ReplayWindow(store, window_rows=1000)
    assert window.refresh() == 60
    batch = window.sample(16, np.random.default_rng(0))
    assert batch.observations.shape == (16, 8)

    # damage a shard in place on the server: the checksum catches it, the shard is quarantined
    damaged = entries[1]
    client = _client(s3_endpoint)
    body = client.get_object(Bucket=BUCKET, Key=f"run1/{damaged.shard_path}")["Body"].read()
    client.put_object(Bucket=BUCKET, Key=f"run1/{damaged.shard_path}", Body=body[:-10])
    with pytest.raises(CorruptShardError, match="truncated"):
        store.read(damaged)
    assert [e.key for e in store.entries()] == [entries[0].key, entries[2].key]
    quarantine = _objects(s3_endpoint, "run1/quarantine/")
    assert f"run1/quarantine/{damaged.key}.reason.json" in quarantine
    assert f"run1/quarantine/{damaged.key}.json.manifest.json" in quarantine
    assert store.quarantined()[0].name == damaged.key

    # an orphan (no manifest entry) stays invisible; the audit quarantines it (it is not a shard)
    with fs.open_output_stream(f"{BUCKET}/run1/shards/orphan.arrow") as out:
        out.write(b"half a shard")
    assert len(store.entries()) == 2
    report = audit_store(store, grace_s=0)
    assert [name for name, _ in report.quarantined] == ["shards/orphan.arrow"]
    assert "run1/quarantine/orphan.arrow" in _objects(s3_endpoint, "run1/quarantine/")
    # an entry deleted on the server: the audit re-commits its shard from the file itself
    lost = entries[2]
    client.delete_object(Bucket=BUCKET, Key=f"run1/manifest/{lost.key}.json")
    assert len(ShardStore(f"s3://{BUCKET}/run1", filesystem=fs).entries()) == 1
    assert audit_store(store, grace_s=0).recommitted == (lost.shard_path,)
    assert [e.writer_id for e in store.entries()] == ["actor_0", "actor_0"]


def test_store_from_an_s3_uri_with_options(s3_endpoint: str) -> None:
    uri = (
        f"s3://{KEY}:{SECRET}@{BUCKET}/run2?endpoint_override={s3_endpoint}"
        f"&scheme=http&region={REGION}"
    )
    store = ShardStore(uri)
    assert SECRET not in repr(store) and store.uri == f"s3://{BUCKET}/run2"
    records = synthetic_records(5, np.random.default_rng(1), observation_size=8)
    entry = ShardWriter(store, writer_id="w").write(records).entry
    again = ShardStore(uri)
    assert again.entries() == [entry]
    assert again.read(entry).num_rows == 5
