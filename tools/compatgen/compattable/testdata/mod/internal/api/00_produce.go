package api

const produceMax = 9

func newProduceHandler(d *DataPlaneDeps) Handler {
	return Handler{Key: 0, MinVersion: int16(3), MaxVersion: produceMax, Handle: nil}
}
