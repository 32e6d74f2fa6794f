"""Contacts, shared by both engines: the impact law (`law`), the complementarity solve of simultaneous
contacts (`solver`) and the position projection (`projection`)."""
