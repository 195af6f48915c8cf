package wire

const (
	FloorVersion int16 = 4
	TopVersion         = ceiling
	ceiling            = 18
)
