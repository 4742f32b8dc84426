package httpapi

// SetCORSOrigins replaces Options.CORSOrigins while the API serves: the
// requests that start after it returns follow the new list (a config
// reload).
func (a *API) SetCORSOrigins(origins []string) {
	c := newCORS(origins, a.opts.CORSMaxAge)
	a.live.cors.Store(&c)
}

// SetAdminToken replaces Options.AdminToken while the API serves; empty
// disables the admin routes.
func (a *API) SetAdminToken(token string) {
	a.live.token.Store(&token)
}
