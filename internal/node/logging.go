package node

import "github.com/sluice-io/sluice/internal/logging"

// logLevels are the levels of the node's loggers, which DescribeConfigs
// and IncrementalAlterConfigs on BROKER_LOGGER read and change. New adopts
// the logger it is given, so they are always there.
func (n *Node) logLevels() *logging.Levels {
	_, levels := logging.Adopt(n.logger)
	return levels
}
