package commitlog

import "github.com/sluice-io/sluice/internal/kafka"

// The Manager places a new log in the online dir holding the fewest logs
// and futures, as Kafka's LogManager.nextLogDirs does. Counting them at
// every new log made a start with 10,000 partitions on several dirs
// quadratic, so the counts are kept where dirOf and futures change: these
// methods are the only writers of the three (m.mu held).

// setDirLocked records tp's current log in dir.
func (m *Manager) setDirLocked(tp kafka.TopicPartition, dir string) {
	if old, ok := m.mu.dirOf[tp]; ok {
		m.mu.perDir[old]--
	}
	m.mu.dirOf[tp] = dir
	m.mu.perDir[dir]++
}

// dropDirLocked forgets tp's current log's dir.
func (m *Manager) dropDirLocked(tp kafka.TopicPartition) {
	if old, ok := m.mu.dirOf[tp]; ok {
		m.mu.perDir[old]--
		delete(m.mu.dirOf, tp)
	}
}

// setFutureLocked records f as tp's future log.
func (m *Manager) setFutureLocked(tp kafka.TopicPartition, f *futureLog) {
	if old, ok := m.mu.futures[tp]; ok {
		m.mu.perDir[old.dir]--
	}
	m.mu.futures[tp] = f
	m.mu.perDir[f.dir]++
}

// dropFutureLocked forgets tp's future log.
func (m *Manager) dropFutureLocked(tp kafka.TopicPartition) {
	if old, ok := m.mu.futures[tp]; ok {
		m.mu.perDir[old.dir]--
		delete(m.mu.futures, tp)
	}
}
