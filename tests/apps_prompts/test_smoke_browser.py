from cua import open_app, isolated_world


async def test_app_loads_and_isolated_world_hides_app_globals():
    html = "<html><body><p id=x>hi</p><script>window.appState = {score: 1}</script></body></html>"
    async with open_app(html) as app:
        world = isolated_world(app.page)
        assert await world.evaluate("document.querySelector('#x').textContent") == "hi"
        assert await world.evaluate("typeof window.appState") == "undefined"
        assert await app.page.evaluate("typeof window.appState") == "object"
