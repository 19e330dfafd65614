//! Bearer auth and tenant isolation.

use reqwest::Method;

use crate::support::{OTHER_TOKEN, Observed, TestServer, endpoint};

#[tokio::test]
async fn requests_need_a_known_token() {
    let s = TestServer::start().await;
    let none = Observed::of(
        s.client
            .get(format!("{}/v1/endpoints", s.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((none.status, none.code().as_str()), (401, "unauthorized"));
    let wrong = s
        .client
        .get(format!("{}/v1/endpoints", s.base))
        .bearer_auth("not-a-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
}

#[tokio::test]
async fn a_tenant_never_sees_or_touches_another_tenants_resources() {
    let s = TestServer::start().await;
    assert_eq!(
        s.create("endpoints", "k", endpoint("orders"))
            .await
            .status(),
        201
    );
    let other = |method: Method, path: &str| {
        s.client
            .request(method, format!("{}{path}", s.base))
            .bearer_auth(OTHER_TOKEN)
    };
    let read = Observed::of(
        other(Method::GET, "/v1/endpoints/orders")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(read.status, 404, "another tenant's resource is absent");
    let list = Observed::of(other(Method::GET, "/v1/endpoints").send().await.unwrap())
        .await
        .json();
    assert_eq!(list["items"], serde_json::json!([]));
    let delete = other(Method::DELETE, "/v1/endpoints/orders")
        .header("idempotency-key", "x")
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 404);
    // The same name is free in the other tenant.
    let theirs = other(Method::POST, "/v1/endpoints")
        .header("idempotency-key", "y")
        .json(&endpoint("orders"))
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), 201);
    assert_eq!(s.get("/v1/endpoints/orders").await.status(), 200);
}
