package node

import "sluice/internal/api"

func build() {
	api.NewRegistry(api.Deps{DataPlane: nil}, api.QuorumHandler(nil))
	rel := api.ControllerRelease()
	api.NewRegistry(api.Deps{Release: &rel}, append(api.ControllerHandlers(nil), api.QuorumHandler(nil))...)
}
