"""Contacts, shared by both engines: the impact law (`law`), the complementarity solve of simultaneous
contacts (`solver`), the position projection (`projection`), friction at a contact (`friction`), and the
impact law of planar rigid bodies at several contact points (`rigid`, groundwork for polygons: not yet used
by `World`)."""
