package surface

func findRecord(recs []Record, id string) *Record {
	for i := range recs {
		if recs[i].ID == id {
			return &recs[i]
		}
	}
	return nil
}

// concreteAction resolves the action a template runs for one record.
func concreteAction(r *Record, template string) (string, bool) {
	if r.Actions == nil {
		return template + ":" + r.ID, true
	}
	a, ok := r.Actions[template]
	return a, ok && a != ""
}
