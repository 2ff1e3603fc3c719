"""An MCP server that requires OAuth, on loopback: the Python SDK's own authorization-server
routes (metadata, dynamic registration, authorize, token, refresh) and bearer checks, over an
in-memory provider whose access tokens live `EXPIRY` seconds.

Usage: oauth_server.py PORT EXPIRY [--refuse-refresh]
With --refuse-refresh every refresh token is unknown (the token endpoint answers
invalid_grant). Its one tool, `grants`, answers with the token requests it has seen, by
grant type, and the bearer token of the call: the tests read what happened from it.
"""

import secrets
import sys
import time

from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthToken

port, expiry = int(sys.argv[1]), int(sys.argv[2])
refuse_refresh = "--refuse-refresh" in sys.argv
base = f"http://127.0.0.1:{port}"


class Provider:
    def __init__(self):
        self.clients, self.codes, self.refresh, self.access = {}, {}, {}, {}
        self.grants = []

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, info):
        self.clients[info.client_id] = info

    async def authorize(self, client, params):
        code = secrets.token_hex(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, code):
        return self.codes.get(code)

    async def exchange_authorization_code(self, client, code):
        del self.codes[code.code]
        self.grants.append("authorization_code")
        return self.issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client, token):
        return None if refuse_refresh else self.refresh.get(token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        del self.refresh[refresh_token.token]
        self.grants.append(f"refresh_token resource={refresh_token.resource}")
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    def issue(self, client_id, scopes, resource):
        access, refresh = secrets.token_hex(16), secrets.token_hex(16)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + expiry, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access, token_type="Bearer", expires_in=expiry, refresh_token=refresh, scope=" ".join(scopes)
        )

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)


provider = Provider()
server = MCPServer(
    "oauth-peer",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        validate_token_resource=False,
        client_registration_options=ClientRegistrationOptions(enabled=True),
    ),
)


@server.tool()
def grants(ctx: Context) -> str:
    """The token requests seen, by grant type."""
    return "\n".join(provider.grants)


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=port)
