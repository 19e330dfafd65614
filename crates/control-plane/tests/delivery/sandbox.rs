//! The sandbox (the desktop app's embedded control plane) runs the demo receiver and points
//! the demo targets at it, also after a restart on a new port; its first start imports a day
//! of history (a living dashboard and DLQ at once), a restart does not import it again.

use std::time::Duration;

use switchyard_control_plane::sandbox::Sandbox;

#[tokio::test]
async fn sandbox_points_demo_targets_at_its_receiver_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let mut dead_after_first: Option<i64> = None;
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
        // A day behind it: attempts over 24 hours, legacy-erp failing since long ago, dead
        // deliveries in the DLQ. A restart keeps them and adds no second day.
        let report: serde_json::Value = client
            .get(format!(
                "{}/v1/metrics/deliveries?window=24h&group_by=target",
                sandbox.url()
            ))
            .bearer_auth(&sandbox.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let dead = report["totals"]["dead"].as_i64().unwrap();
        assert!(
            report["totals"]["attempts"].as_i64().unwrap() > 1000,
            "{report:#}"
        );
        assert!(report["totals"]["events_accepted"].as_i64().unwrap() > 500);
        let erp = report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == "legacy-erp")
            .expect("legacy-erp has a day of attempts");
        assert_eq!(erp["success_rate"], 0.0);
        assert!(erp["consecutive_failures"].as_i64().unwrap() > 500);
        match dead_after_first {
            None => {
                assert!(dead > 100, "{dead}");
                dead_after_first = Some(dead);
            }
            // Only live deliveries died since (a few seconds' worth), no second history.
            Some(first) => assert!(dead >= first && dead < first + 50, "{first} → {dead}"),
        }
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

/// The desktop binds the sandbox's port before its window and starts the control plane
/// afterwards: a request sent in between waits in the socket's backlog and is answered once
/// the control plane is up (not refused), and the next launch gets the same port back, so the
/// URL the console registered stays right.
#[tokio::test]
async fn a_bound_sandbox_answers_what_was_sent_before_it_started_and_keeps_its_port() {
    let dir = tempfile::tempdir().unwrap();
    let binding = Sandbox::bind(dir.path(), None).unwrap();
    let url = binding.url();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let early = tokio::spawn({
        let (client, url) = (client.clone(), url.clone());
        async move {
            client
                .get(format!("{url}/v1/info"))
                .bearer_auth(switchyard_control_plane::demo::DEMO_TOKEN)
                .timeout(Duration::from_secs(60))
                .send()
                .await
        }
    });
    // The request is on its way (connected into the backlog) before the server exists.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !early.is_finished(),
        "answered before the control plane started"
    );
    let sandbox = binding.start().await.unwrap();
    assert_eq!(sandbox.url(), url);
    let answer = early.await.unwrap().expect("the early request was refused");
    assert_eq!(answer.status(), 200);
    let port = url.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    sandbox.server.stop().await.unwrap();
    drop(sandbox.demo);

    let again = Sandbox::bind(dir.path(), Some(port)).unwrap();
    assert_eq!(
        again.url(),
        url,
        "the previous port was free: it is taken again"
    );
    // A port taken by someone else: any free one instead.
    let other = Sandbox::bind(tempfile::tempdir().unwrap().path(), Some(port)).unwrap();
    assert_ne!(other.url(), url);
}
