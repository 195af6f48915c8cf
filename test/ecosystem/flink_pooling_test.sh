#!/usr/bin/env bash
# flink_kafka_test.sh with the KafkaSink's POOLING transaction naming (flink-connector-kafka
# 4.0+): transactional ids are reused from a pool instead of one per checkpoint, so after a
# kill -9 the restored job cannot guess the open ones by name; it lists the ongoing
# transactions (ListTransactions), keeps those writing to its output topic
# (DescribeTransactions) and aborts them. The same checks: exact counts across two kills
# and restores, the killed runs' records aborted.
FLINK_TXN_NAMING=POOLING exec bash "$(dirname "${BASH_SOURCE[0]}")/flink_kafka_test.sh" "$@"
