//! The sandbox (the desktop app's embedded control plane) runs the demo receiver and points
//! the demo targets at it, also after a restart on a new port.

use std::time::Duration;

use switchyard_control_plane::sandbox::Sandbox;

#[tokio::test]
async fn sandbox_points_demo_targets_at_its_receiver_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let sandbox = Sandbox::start(dir.path()).await.unwrap();
        let base = sandbox.demo.receiver.base_url();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let target: serde_json::Value = client
            .get(format!("{}/v1/targets/billing", sandbox.url()))
            .bearer_auth(&sandbox.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(target["spec"]["url"], format!("{base}/healthy"));
        let info: serde_json::Value = client
            .get(format!("{}/v1/info", sandbox.url()))
            .bearer_auth(&sandbox.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(info["retry_schedule"][1], "2s");
        // The healthy demo behaviour answers 200.
        let r = client
            .post(format!("{base}/healthy"))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let Sandbox { server, demo, .. } = sandbox;
        drop(demo);
        server.stop().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
